import type { ModelConfig, Pricing, ProviderConfig } from '../config/gateway-config.ts';

export type Category = 'audio' | 'image' | 'video' | 'llm' | 'embedding';
/** Categories in the order every model list uses; lists are grouped the same way. */
export const CATEGORY_ORDER: readonly Category[] = ['audio', 'image', 'video', 'llm', 'embedding'];
/** Categories served by `POST /v1/tasks`; the others have endpoints of their own. */
export const isMediaCategory = (category: Category): boolean => category !== 'llm' && category !== 'embedding';

/** The model object (OpenAI-style, docs/api-contract.md), plus `pricing` for the dashboard. */
export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  added: number;
  owned_by: string;
  provider_display: string;
  display_name: string;
  category: Category;
  context_length?: number;
  max_output?: number;
  pricing?: Pricing;
}

export function toModelObject(model: ModelConfig, provider: ProviderConfig, addedAt: number): ModelObject {
  const object: ModelObject = {
    id: model.id,
    object: 'model',
    created: model.created ?? addedAt,
    added: addedAt,
    owned_by: provider.id,
    provider_display: provider.display_name ?? provider.id,
    display_name: model.display_name,
    category: model.category,
  };
  if (model.category === 'llm') {
    if (model.context_length !== undefined) object.context_length = model.context_length;
    if (model.max_output !== undefined) object.max_output = model.max_output;
  }
  if (model.pricing) object.pricing = model.pricing;
  return object;
}

/** Grouped by category (the order above), then by display name, then id for a stable order. */
export function compareModels(a: ModelObject, b: ModelObject): number {
  return (
    CATEGORY_ORDER.indexOf(a.category) - CATEGORY_ORDER.indexOf(b.category) ||
    a.display_name.localeCompare(b.display_name) ||
    a.id.localeCompare(b.id)
  );
}
