/**
 * The Node flags of a worker thread whose entry file is the module at `moduleUrl`, one that imports
 * only `node:` modules and packages. Run from TypeScript sources on a Node that strips types itself, it
 * needs none of the parent's loader flags (`--import @swc-node/register/esm-register` costs a thread
 * ~300 ms to start); otherwise (undefined) it inherits them.
 */
export function threadExecArgv(moduleUrl: string): string[] | undefined {
  const nativeTypeScript = Boolean((process.features as { typescript?: unknown }).typescript);
  return moduleUrl.endsWith('.ts') && nativeTypeScript ? [] : undefined;
}
