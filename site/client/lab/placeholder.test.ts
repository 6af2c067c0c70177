import { describe, expect, it } from 'vitest';
import { CURSOR_LEFT, keysFor, placeholdersIn } from './placeholder.ts';

describe('snippet placeholders', () => {
  it('finds <word> placeholders, not redirections or here-documents', () => {
    expect(placeholdersIn('kubectl create configmap a --from-literal=v="<ClusterIP>:80" --from-literal=s=<scheduler>')).toEqual([
      '<ClusterIP>',
      '<scheduler>',
    ]);
    expect(placeholdersIn('cat <<EOF 2>&1 | grep -c x > /dev/null; a<b')).toEqual([]);
  });

  it('a command without a placeholder runs: the text and Enter', () => {
    expect(keysFor('kubectl get pods')).toEqual({ text: 'kubectl get pods', execute: true });
  });

  it('a placeholder is typed without Enter, the cursor just after the first one', () => {
    expect(keysFor('kubectl -n x create configmap m --from-literal=mode=<mode>')).toEqual({
      text: 'kubectl -n x create configmap m --from-literal=mode=<mode>',
      execute: false,
    });
    const { text, execute } = keysFor('echo "<count>" | kubectl apply -f -');
    expect(execute).toBe(false);
    expect(text).toBe(`echo "<count>" | kubectl apply -f -${CURSOR_LEFT.repeat('" | kubectl apply -f -'.length)}`);
  });
});
