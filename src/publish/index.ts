/**
 * Publishing shared by every command (README.md, "Output"): write into a
 * staging directory beside the target, check it for tokens, fix modes, and
 * rename it into place only when complete.
 */
export { commit, withStaging } from './commit.js';
export { cleanupAllSync } from './registry.js';
export { createStaging, type Staging } from './staging.js';
