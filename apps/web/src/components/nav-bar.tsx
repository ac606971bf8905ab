import { Link, useLocation } from 'wouter';
import { ConnectionBadge } from './connection-badge.tsx';

const PAGES = [
  { name: 'Chat', href: '/chat', match: (path: string) => path === '/' || path.startsWith('/chat') },
  { name: 'Processes', href: '/processes', match: (path: string) => path.startsWith('/processes') },
  { name: 'Sessions', href: '/sessions', match: (path: string) => path.startsWith('/sessions') },
  { name: 'Approvals', href: '/approvals', match: (path: string) => path.startsWith('/approvals') },
  { name: 'Tools', href: '/tools', match: (path: string) => path.startsWith('/tools') },
  { name: 'Status', href: '/status', match: (path: string) => path.startsWith('/status') },
];

/** The top bar: a link per page and the connection's state. */
export function NavBar() {
  const [path] = useLocation();
  return (
    <header className="nav-bar">
      <span className="brand">MCI</span>
      <nav aria-label="Pages">
        {PAGES.map((page) => (
          <Link key={page.name} href={page.href} aria-current={page.match(path) ? 'page' : undefined}>
            {page.name}
          </Link>
        ))}
      </nav>
      <ConnectionBadge />
    </header>
  );
}
