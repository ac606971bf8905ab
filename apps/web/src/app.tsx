import { NavBar } from './components/nav-bar.tsx';
import { ConnectionProvider } from './connection/connection-provider.tsx';
import { Pages } from './pages/pages.tsx';

/** The console: the top bar and the page the URL names. */
export function App() {
  return (
    <ConnectionProvider>
      <NavBar />
      <Pages />
    </ConnectionProvider>
  );
}
