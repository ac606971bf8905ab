// Public API of @mci/protocol: filled in by its issue.
export {};
