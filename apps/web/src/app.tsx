import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { NavBar } from './components/nav-bar.tsx';
import { SignInBox } from './components/sign-in-box.tsx';
import { useConnection } from './connection/connection-context.ts';
import { ConnectionProvider } from './connection/connection-provider.tsx';
import { ProcessDetailPage } from './pages/process-detail-page.tsx';
import { ProcessesPage } from './pages/processes-page.tsx';
import { StatusPage } from './pages/status-page.tsx';
import { ToolsPage } from './pages/tools-page.tsx';

// The chat page brings markdown rendering: loaded when first shown.
const ChatPage = lazy(() => import('./pages/chat-page.tsx').then((module) => ({ default: module.ChatPage })));

function Pages() {
  const { client, state, error } = useConnection();
  if (state === 'signed-out') return <SignInBox />;
  if (client === undefined)
    return (
      <main className="page">
        <p role="status">Connecting to the server…</p>
        {error !== undefined && <p className="muted">{error}</p>}
      </main>
    );
  return (
    <Suspense fallback={<main className="page">Loading…</main>}>
      <Switch>
        <Route path="/">
          <ChatPage />
        </Route>
        <Route path="/chat">
          <ChatPage />
        </Route>
        <Route path="/chat/:id">{(params) => <ChatPage conversationId={params.id} />}</Route>
        <Route path="/processes">
          <ProcessesPage />
        </Route>
        <Route path="/processes/:pid">{(params) => <ProcessDetailPage pid={Number(params.pid)} />}</Route>
        <Route path="/tools">
          <ToolsPage />
        </Route>
        <Route path="/status">
          <StatusPage />
        </Route>
        <Route>
          <Redirect to="/" />
        </Route>
      </Switch>
    </Suspense>
  );
}

/** The console: the top bar and the page the URL names. */
export function App() {
  return (
    <ConnectionProvider>
      <NavBar />
      <Pages />
    </ConnectionProvider>
  );
}
