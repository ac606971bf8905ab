// Public API of @mci/server (the server itself, for embedding and tests).
export {};
