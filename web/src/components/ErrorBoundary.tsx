// A page that fails to render (or whose code cannot be fetched, as after an upgrade replaced the
// hashed chunks) shows a way out instead of a blank screen.
import { Component, type ReactNode } from 'react';

interface State {
  error: Error | null;
}

export class ErrorBoundary extends Component<{ children: ReactNode; resetKey: string }, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  componentDidUpdate(previous: { resetKey: string }) {
    // Navigating elsewhere gives the next page its own chance.
    if (previous.resetKey !== this.props.resetKey && this.state.error) this.setState({ error: null });
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <section className="page" role="alert">
        <h1>This page could not be shown</h1>
        <p className="muted">{this.state.error.message}</p>
        <p>
          <button type="button" className="button primary" onClick={() => window.location.reload()}>
            Reload
          </button>
        </p>
      </section>
    );
  }
}
