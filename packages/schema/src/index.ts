// Public API of @mci/schema: filled in by its issue.
export {};
