// Public API of @mci/client: filled in by its issue.
export {};
