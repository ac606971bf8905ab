// Public API of @mci/tools: filled in by its issue.
export {};
