/** The language of a node's code, condition and call arguments. */
export type CodeLanguage = 'javascript' | 'python';

/** The node's own language, else the graph's, else JavaScript. */
export function codeLanguage(config: object, node?: object): CodeLanguage {
  return (
    (node as { language?: CodeLanguage } | undefined)?.language ??
    (config as { language?: CodeLanguage }).language ??
    'javascript'
  );
}
