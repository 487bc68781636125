// What `GET /skiff/v1/namespaces/<ns>/inferenceservices/<name>/traffic` answers: an InferenceService's
// recent requests at the gateway in fixed time buckets (src/server/inference/history.ts keeps them).

export interface TrafficCell {
  requests: number;
  /** answers with a 5xx status */
  errors: number;
  /** answers with a 4xx status (the client's request was refused) */
  rejected: number;
  /** latency percentiles in seconds, absent when there were no requests */
  p50?: number;
  p90?: number;
  p99?: number;
}

export interface TrafficBucket extends TrafficCell {
  /** the bucket's start, milliseconds since the epoch */
  t: number;
  /** per revision name (`<isvc>-predictor-00002`); requests refused before a revision was picked are only in the total */
  revisions: Record<string, TrafficCell>;
}

export interface TrafficHistoryJson {
  namespace: string;
  name: string;
  bucketSeconds: number;
  /** how many buckets are kept */
  capacity: number;
  /** oldest first; only buckets that saw requests */
  buckets: TrafficBucket[];
}

/** one line of the `?watch=true` stream */
export type TrafficEvent = { type: 'HISTORY'; history: TrafficHistoryJson } | { type: 'BUCKET'; bucket: TrafficBucket };
