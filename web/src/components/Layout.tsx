// The signed-in frame: header with navigation, session countdown, theme switch and sign-out; the
// session warning; the page below.
import { usePluginDashboard } from '../dashboard/plugin-dashboard.ts';
import { useQuery } from '@tanstack/react-query';
import { LogOut, Moon, Sun } from 'lucide-react';
import { Suspense, useEffect, useRef, useState } from 'react';
import { Link, NavLink, Outlet, useLocation } from 'react-router';
import { api, type Page, type Team } from '../api.ts';
import { Loading } from '../App.tsx';
import { formatCountdown, spokenDuration, useSession, useSessionClock } from '../session.tsx';
import { applyTheme, effectiveTheme, onThemeChange } from '../theme.ts';
import { ErrorBoundary } from './ErrorBoundary.tsx';
import { SessionWarning } from './SessionWarning.tsx';

export function ThemeToggle() {
  const [theme, setTheme] = useState(effectiveTheme);
  // The system's preference can change while the page is open.
  useEffect(() => onThemeChange(() => setTheme(effectiveTheme())), []);
  const next = theme === 'dark' ? 'light' : 'dark';
  return (
    <button
      type="button"
      className="icon-button"
      aria-label={`Switch to ${next} mode`}
      title={`Switch to ${next} mode`}
      onClick={() => {
        applyTheme(next);
        setTheme(next);
      }}
    >
      {theme === 'dark' ? <Sun aria-hidden size={18} /> : <Moon aria-hidden size={18} />}
    </button>
  );
}

const thisYear = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric' });
const anyYear = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
/** A day short enough for the header: "Dec 24", with its year when it is not this one. */
const shortDay = (at: Date) => (at.getFullYear() === new Date().getFullYear() ? thisYear : anyYear).format(at);

/**
 * How long until the session ends, in words: "Signed out in 14:58". A remembered sign-in renews
 * itself, so it says until when it is kept instead. The timer role keeps screen readers from
 * reading every tick; its label says the time in words for whoever looks.
 */
function SessionCountdown({ email }: { email: string }) {
  const { session } = useSession();
  const { remaining } = useSessionClock();
  if (remaining === null || !session) return null;
  if (session.remembered) {
    const until = session.remember_expires_at ? new Date(session.remember_expires_at) : null;
    return (
      <span className="session-time" title={`Signed in as ${email}${until ? ` on this device until ${anyYear.format(until)}` : ''}`} data-testid="session-remaining">
        {until ? `Signed in until ${shortDay(until)}` : 'Kept signed in'}
      </span>
    );
  }
  return (
    <span className="session-time" role="timer" aria-label={`Signed out in ${spokenDuration(remaining)}`} title={`Signed in as ${email}`} data-testid="session-remaining">
      Signed out in <span className="countdown">{formatCountdown(remaining)}</span>
    </span>
  );
}

export function Layout() {
  const { user, signOut } = useSession();
  const teams = useQuery({ queryKey: ['teams'], queryFn: () => api<Page<Team>>('/api/user/teams') });
  const firstTeam = teams.data?.items.find((t) => !t.archived_at);
  const admin = user?.role === 'owner' || user?.role === 'admin';
  // Plugins' pages for instance administrators, each an entry of the menu.
  const contributed = usePluginDashboard({ enabled: admin });
  const { pathname } = useLocation();
  const main = useRef<HTMLElement>(null);
  const firstPath = useRef(pathname);
  // After a navigation, screen-reader and keyboard users continue at the new page, not in the menu.
  useEffect(() => {
    if (pathname !== firstPath.current) main.current?.focus({ preventScroll: true });
  }, [pathname]);
  return (
    <>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link to="/" className="brand" aria-label="Plumb: all sites">
          <span className="brand-mark" aria-hidden>
            ◆
          </span>
          Plumb
        </Link>
        <nav aria-label="Main" className="topnav">
          <NavLink to="/" end>
            Sites
          </NavLink>
          {firstTeam && <NavLink to={`/teams/${firstTeam.id}`}>Team</NavLink>}
          <NavLink to="/account">Account</NavLink>
          {admin && <NavLink to="/admin/users">Users</NavLink>}
          {admin && <NavLink to="/admin/system">System</NavLink>}
          {admin &&
            (contributed.data?.admin_pages ?? []).map((page) => (
              <NavLink key={page.plugin} to={`/plugins/${page.plugin}`}>
                {page.nav_label}
              </NavLink>
            ))}
        </nav>
        <div className="topbar-end">
          <SessionCountdown email={user?.email ?? ''} />
          <ThemeToggle />
          <button type="button" className="icon-button" onClick={() => void signOut()} aria-label="Sign out" title="Sign out">
            <LogOut aria-hidden size={18} />
          </button>
        </div>
      </header>
      <SessionWarning />
      <main id="main" tabIndex={-1} ref={main}>
        <ErrorBoundary resetKey={pathname}>
          <Suspense fallback={<Loading />}>
            <Outlet />
          </Suspense>
        </ErrorBoundary>
      </main>
    </>
  );
}
