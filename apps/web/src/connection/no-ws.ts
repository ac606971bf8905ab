// Stands in for the `ws` package in the browser build: @mci/client uses the global WebSocket there.
export const WebSocket = undefined;
