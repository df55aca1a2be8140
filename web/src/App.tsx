// Routes of the dashboard. Each page is its own chunk, so the first load carries only the shell.
import { lazy, type ReactNode, Suspense } from 'react';
import { Navigate, Route, Routes, useLocation } from 'react-router';
import { Layout } from './components/Layout.tsx';
import { useSession } from './session.tsx';

const Login = lazy(() => import('./pages/Login.tsx'));
const Setup = lazy(() => import('./pages/Setup.tsx'));
const Sites = lazy(() => import('./pages/Sites.tsx'));
const SiteDashboard = lazy(() => import('./pages/SiteDashboard.tsx'));
const Events = lazy(() => import('./pages/Events.tsx'));
const Goals = lazy(() => import('./pages/Goals.tsx'));
const Funnels = lazy(() => import('./pages/Funnels.tsx'));
const AiCrawlers = lazy(() => import('./pages/AiCrawlers.tsx'));
const SiteSettings = lazy(() => import('./pages/SiteSettings.tsx'));
const TeamSettings = lazy(() => import('./pages/TeamSettings.tsx'));
const Account = lazy(() => import('./pages/Account.tsx'));
const AdminUsers = lazy(() => import('./pages/AdminUsers.tsx'));
const AdminSystem = lazy(() => import('./pages/AdminSystem.tsx'));
const Share = lazy(() => import('./pages/Share.tsx'));
const PluginAdmin = lazy(() => import('./pages/PluginAdmin.tsx'));
const AcceptInvite = lazy(() => import('./pages/AcceptInvite.tsx'));
const ForgotPassword = lazy(() => import('./pages/ForgotPassword.tsx'));
const ResetPassword = lazy(() => import('./pages/ResetPassword.tsx'));
const ConfirmEmail = lazy(() => import('./pages/ConfirmEmail.tsx'));
const Unsubscribe = lazy(() => import('./pages/Unsubscribe.tsx'));

export function Loading() {
  return (
    <p className="loading" role="status">
      Loading…
    </p>
  );
}

function RequireSignIn({ children }: { children: ReactNode }) {
  const { status, needsSetup, ended } = useSession();
  const location = useLocation();
  if (status === 'loading') return <Loading />;
  if (status === 'signed_out') {
    if (needsSetup) return <Navigate to="/setup" replace />;
    // After signing out there is nowhere to return to; after an ended session, the same page.
    const from = ended === 'signed_out' ? undefined : location.pathname + location.search;
    return <Navigate to="/login" replace state={{ reason: ended ?? undefined, from }} />;
  }
  return children;
}

export function App() {
  return (
    <Suspense fallback={<Loading />}>
      <Routes>
        <Route path="/login" element={<Login />} />
        <Route path="/setup" element={<Setup />} />
        <Route path="/share/:token" element={<Share />} />
        <Route path="/invite/:token" element={<AcceptInvite />} />
        <Route path="/forgot-password" element={<ForgotPassword />} />
        <Route path="/reset-password" element={<ResetPassword />} />
        <Route path="/confirm-email" element={<ConfirmEmail />} />
        <Route path="/email-reports/unsubscribe" element={<Unsubscribe />} />
        <Route
          element={
            <RequireSignIn>
              <Layout />
            </RequireSignIn>
          }
        >
          <Route index element={<Sites />} />
          <Route path="sites/:siteId" element={<SiteDashboard />} />
          <Route path="sites/:siteId/events" element={<Events />} />
          <Route path="sites/:siteId/goals" element={<Goals />} />
          <Route path="sites/:siteId/funnels" element={<Funnels />} />
          <Route path="sites/:siteId/ai-crawlers" element={<AiCrawlers />} />
          <Route path="sites/:siteId/settings" element={<SiteSettings />} />
          <Route path="teams/:teamId" element={<TeamSettings />} />
          <Route path="account" element={<Account />} />
          <Route path="admin/users" element={<AdminUsers />} />
          <Route path="admin/system" element={<AdminSystem />} />
          <Route path="plugins/:plugin" element={<PluginAdmin />} />
          <Route path="*" element={<NotFound />} />
        </Route>
      </Routes>
    </Suspense>
  );
}

function NotFound() {
  return (
    <section className="page">
      <h1>Not found</h1>
      <p>There is no page at this address.</p>
    </section>
  );
}
