// The sign-in token, kept in the browser's localStorage so a reload stays signed in.
const KEY = 'mci.token';

/** The stored token, or undefined when signed out (or storage is unavailable). */
export function loadToken(): string | undefined {
  try {
    return localStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Stores `token`, or forgets it when undefined. */
export function saveToken(token: string | undefined): void {
  try {
    if (token === undefined) localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, token);
  } catch {
    // Private windows may refuse storage: the token then lives until the tab closes.
  }
}
