// Public API of @mci/intent-extractor: filled in by its issue.
export {};
