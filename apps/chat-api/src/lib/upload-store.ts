import { createReadStream } from "node:fs";
import { type StoredFile, type UploadStore, isMissing, removeFile } from "./file-store";
import { mkdir, rename, stat } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import type { Config } from "./config";

export { type ReceivedFile, type StoredFile, type UploadStore, removeFile } from "./file-store";

/** Files under a directory: `root/{path_id}`. */
class DirectoryStore implements UploadStore {
  readonly incoming: string;

  constructor(private readonly root: string) {
    this.incoming = path.join(root, ".incoming");
  }

  private file(pathId: string): string {
    const file = path.join(this.root, pathId);
    if (!file.startsWith(this.root + path.sep)) throw new Error(`bad path_id ${pathId}`);
    return file;
  }

  async put(pathId: string, from: string): Promise<void> {
    const file = this.file(pathId);
    await mkdir(path.dirname(file), { recursive: true });
    await rename(from, file);
  }

  async open(pathId: string): Promise<StoredFile | undefined> {
    const file = this.file(pathId);
    try {
      const { size } = await stat(file);
      return { body: createReadStream(file), size };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  remove(pathId: string): Promise<void> {
    return removeFile(this.file(pathId));
  }
}

/**
 * A bucket store whose S3 client (the AWS SDK: about 20 MB of a process's
 * memory) is loaded when the first file is stored or read, not at start.
 */
class LazyBucketStore implements UploadStore {
  private store: Promise<UploadStore> | undefined;

  constructor(
    readonly incoming: string,
    private readonly config: Config,
  ) {}

  private loaded(): Promise<UploadStore> {
    // Loaded on first use (a synchronous require inside a promise: this package is CommonJS).
    this.store ??= Promise.resolve().then(() => {
      const loaded = createRequire(__filename)("./bucket-store") as typeof import("./bucket-store");
      return loaded.createBucketStore(this.config, this.incoming);
    });
    return this.store;
  }

  async put(pathId: string, from: string, size: number, contentType: string): Promise<void> {
    await (await this.loaded()).put(pathId, from, size, contentType);
  }

  async open(pathId: string): Promise<StoredFile | undefined> {
    return (await this.loaded()).open(pathId);
  }

  async remove(pathId: string): Promise<void> {
    await (await this.loaded()).remove(pathId);
  }
}

/** The store the configuration names. */
export function createUploadStore(config: Config): UploadStore {
  const root = path.resolve(config.CHAT_DATA_DIR, "uploads");
  if (config.CHAT_S3_BUCKET === undefined) return new DirectoryStore(root);
  return new LazyBucketStore(path.join(root, ".incoming"), config);
}
