// Types of build-inputs.js for the tests that import it (bin/ is plain JavaScript run before any loader).
export declare const BUILD_SETTINGS: readonly string[];
export declare function isTestHelper(fileName: string): boolean;
export declare function modulesToCompile(root: string): string[];
export declare function buildIsCurrent(root: string): boolean;
