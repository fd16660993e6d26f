/** The API's shapes as the page reads them (docs/api-contract.md). */

export type Category = 'audio' | 'image' | 'video' | 'llm' | 'embedding';

export interface Account {
  user_id: number;
  email: string;
  balance_usd: number;
  created_at: number;
  updated_at: number;
}

export interface SpendDay {
  day: string;
  llm: number;
  embedding: number;
  image: number;
  video: number;
  audio: number;
}

export interface Signing {
  enabled: boolean;
  secret?: string | null;
  /** The same secret for Standard Webhooks libraries (`whsec_…`). */
  standard_secret?: string | null;
}

export interface CallbackEntry {
  sent_at: number;
  status: number;
  status_text: string;
}

export interface Task {
  task_id: string;
  model: string;
  category: Category | null;
  status: 'processing' | 'completed' | 'failed' | 'cancelled';
  cost: number;
  created_at: number;
  input?: Record<string, unknown>;
  output?: Record<string, unknown> | null;
  callback_url?: string | null;
  callback_result?: CallbackEntry[] | null;
  error_message?: string;
}

export interface Pagination {
  page: number;
  page_size: number;
  total: number;
  total_pages: number;
  has_next: boolean;
  has_previous: boolean;
}

export interface Pricing {
  input_per_mtok?: number;
  output_per_mtok?: number;
  per_request?: number;
  per_image?: number;
  per_second?: number;
  per_1k_chars?: number;
  minimum?: number;
}

export interface Model {
  id: string;
  owned_by: string;
  provider_display?: string;
  display_name: string;
  category: Category;
  context_length?: number;
  max_output?: number;
  pricing?: Pricing;
}

/** An API key as GET /v1/keys lists it (docs/keys.md). */
export interface ApiKey {
  id: number;
  name: string;
  key_prefix: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  budget_usd: number | null;
  budget_period: 'day' | 'week' | 'month' | null;
  models: string[] | null;
  rpm: number | null;
  tpm: number | null;
  spend_usd: number;
  period_start: number | null;
}

export interface SpendBreakdown {
  by_key?: Array<{ key_id: number | null; name: string | null; spend_usd: number; calls: number }>;
  by_model?: Array<{ model: string; spend_usd: number; calls: number }>;
}
