// Pure helpers over JSON-shaped values, shared by every layer (src/util/ imports nothing from src/).

/**
 * A JSON object: not null, not an array. The value type defaults to `any` because most callers read
 * decoded YAML/JSON whose shape they check field by field; pass `unknown` (or a JSON type) for a
 * stricter narrowing.
 */
export function isPlainObject<V = any>(v: unknown): v is Record<string, V> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
