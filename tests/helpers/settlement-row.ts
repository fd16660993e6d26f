import type { SettlementRow } from '../../src/llm/llm-settlement.repository.ts';

/** A settlement row as the journal holds it: a completed `sandbox/echo` call without holds, with `fields` over it. */
export function settlementRow(fields: Partial<SettlementRow> & Pick<SettlementRow, 'id'>): SettlementRow {
  return {
    ord: 0,
    account_id: 1,
    model: 'sandbox/echo',
    provider: 'sandbox',
    category: 'llm',
    status: 'completed',
    input: { messages: [{ role: 'user', content: 'a "quoted"\nline' }] },
    output: null,
    error_message: null,
    cost: '0.000001',
    created_at: new Date(0).toISOString(),
    hold_id: null,
    hold_units: null,
    request_id: null,
    key_id: null,
    key_hold_id: null,
    key_hold_units: null,
    ...fields,
  };
}
