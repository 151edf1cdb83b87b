/**
 * Publishing shared by every command (CONTRACT section 6): write into a
 * staging directory beside the target, check it for tokens, fix modes, and
 * rename it into place only when complete.
 */
export { commit, withStaging } from './commit.js';
export { cleanupAllSync, installSignalHandlers, type OnSignal, type Signal } from './registry.js';
export { createStaging, type Staging } from './staging.js';
export { assertReplaceable, assertSafeTarget, MANIFEST_OF, type OutputKind } from './target.js';
