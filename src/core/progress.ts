/**
 * Long steps of a screen operation the user should see happen (pulling an image), as data: core
 * code reports them through the reporter it was given, the extension words them and shows a
 * notification until the operation ends. Tests and headless callers pass no reporter.
 */
export type ProgressStep = { readonly kind: 'pullingImage'; readonly image: string };

export type ProgressReporter = (step: ProgressStep) => void;
