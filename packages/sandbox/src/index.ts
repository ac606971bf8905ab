// Public API of @mci/sandbox: filled in by its issue.
export {};
