/** Turns texts into vectors. The built-in one works offline; others call an embeddings endpoint. */
export interface Embedder {
  /** Recorded on collections as `embedding_model_name`. */
  readonly modelName: string;
  /** Recorded on collections as `vector_size`. */
  readonly dimensions: number;
  /** One L2-normalised vector per text, in order. Honours `signal` between batches. */
  embed(texts: string[], signal?: AbortSignal): Promise<Float32Array[]>;
  close(): Promise<void>;
}
