/**
 * A lossy conversion reports what it dropped or changed instead of dropping it silently.
 */
export interface TranslationWarning {
  type: 'unsupported-setting' | 'unsupported-content' | 'changed-value' | 'other';
  /** The setting or field concerned, in the source format's terms (`logprobs`, `messages[2].content[1]`). */
  field?: string;
  message: string;
}

export interface Translated<T> {
  value: T;
  warnings: TranslationWarning[];
}
