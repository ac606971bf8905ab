import { useState } from 'react';
import { useConnection } from '../connection/connection-context.ts';
import { ErrorText } from './error-text.tsx';

/** Asks for a token when the server requires one; the token is kept in the browser's storage. */
export function SignInBox() {
  const { signIn, error } = useConnection();
  const [token, setToken] = useState('');
  return (
    <main className="page sign-in">
      <form
        aria-label="Sign in"
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim() !== '') signIn(token.trim());
        }}
      >
        <h1>Sign in</h1>
        <p className="muted">
          This server needs a token (a client or operator token from its configuration).
        </p>
        <label>
          Token
          <input
            type="password"
            autoComplete="current-password"
            value={token}
            onChange={(event) => setToken(event.target.value)}
          />
        </label>
        <ErrorText error={error} />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
