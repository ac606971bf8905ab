import { lazy, Suspense } from 'react';
import { Redirect, Route, Switch } from 'wouter';
import { SignInBox } from '../components/sign-in-box.tsx';
import { useConnection } from '../connection/connection-context.ts';
import { ApprovalsPage } from './approvals-page.tsx';
import { HomePage } from './home-page.tsx';
import { ProcessDetailPage } from './process-detail-page.tsx';
import { ProcessesPage } from './processes-page.tsx';
import { SessionDetailPage } from './session-detail-page.tsx';
import { SessionsPage } from './sessions-page.tsx';
import { StatusPage } from './status-page.tsx';
import { ToolsPage } from './tools-page.tsx';

// The chat page brings markdown rendering: loaded when first shown.
const ChatPage = lazy(() => import('./chat-page.tsx').then((module) => ({ default: module.ChatPage })));

/** The page the URL names, once connected; the sign-in box when the server wants a token. */
export function Pages() {
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
          <HomePage>
            <ChatPage />
          </HomePage>
        </Route>
        <Route path="/chat">
          <ChatPage />
        </Route>
        <Route path="/chat/:id">{(params) => <ChatPage conversationId={params.id} />}</Route>
        <Route path="/processes">
          <ProcessesPage />
        </Route>
        <Route path="/processes/:pid">{(params) => <ProcessDetailPage pid={Number(params.pid)} />}</Route>
        <Route path="/sessions">
          <SessionsPage />
        </Route>
        <Route path="/sessions/:id">
          {(params) => <SessionDetailPage id={decodeURIComponent(params.id)} />}
        </Route>
        <Route path="/approvals">
          <ApprovalsPage />
        </Route>
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
