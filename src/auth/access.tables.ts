export interface AccessTables {
  /** Shared token buckets of the rate limits (src/auth/rate-limiter.ts): tokens left as of `updated_at` (epoch ms). */
  rate_buckets: {
    organization_id: string;
    bucket: string;
    tokens: number;
    updated_at: number;
  };
}
