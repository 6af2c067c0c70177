import { describe, expect, it } from 'vitest';
import { CURSOR_LEFT, keysFor, placeholdersIn, snippetWords } from './placeholder.ts';
import { loadLabs } from '../../../scripts/labs/registry.ts';

describe('snippet placeholders', () => {
  it('finds <word> placeholders, not redirections or here-documents', () => {
    expect(placeholdersIn('kubectl create configmap a --from-literal=v="<ClusterIP>:80" --from-literal=s=<scheduler>')).toEqual([
      '<ClusterIP>',
      '<scheduler>',
    ]);
    expect(placeholdersIn('cat <<EOF 2>&1 | grep -c x > /dev/null; a<b')).toEqual([]);
  });

  it('a placeholder may hold words, kept whole in the snippet', () => {
    expect(placeholdersIn('--from-literal=with-pod="<count on worker>" --from-literal=mark="<first chain>"')).toEqual([
      '<count on worker>',
      '<first chain>',
    ]);
    expect(snippetWords('a --x="<count on worker>" b').map((w) => w.map((p) => (p.placeholder ? `[${p.text}]` : p.text)).join(''))).toEqual(
      ['a', ' ', '--x="[<count on worker>]"', ' ', 'b'],
    );
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

describe("the labs' snippets", () => {
  const snippets = loadLabs().flatMap((lab) =>
    lab.steps.flatMap((step) => step.snippets.map((s) => ({ where: `${lab.id}/${step.id}`, ...s }))),
  );

  it('every answer is named in a snippet typed for the learner to finish; the command that stores it runs as it is', () => {
    const records = snippets.filter((s) => /create configmap/.test(s.command) && s.where !== 'scale-compare/baseline');
    expect(records.length).toBeGreaterThan(10);
    for (const r of records) {
      expect(keysFor(r.command).execute, `${r.where}: "${r.label}" refers to named values only`).toBe(true);
      const names = [...r.command.matchAll(/="\$(\w+)"/g)].map((m) => m[1]);
      expect(names.length, `${r.where}: "${r.label}"`).toBeGreaterThan(0);
      for (const name of names) {
        const named = snippets.find((s) => s.where === r.where && s.command.startsWith(`${name}=`));
        expect(named && keysFor(named.command).execute, `${r.where}: ${name} is typed, never run`).toBe(false);
      }
    }
  });

  it('every snippet with a <placeholder> is typed, across the labs', () => {
    const typed = snippets.filter((s) => !keysFor(s.command).execute);
    expect(typed.length).toBeGreaterThanOrEqual(14);
    expect(new Set(typed.map((s) => s.where.split('/')[0])).size).toBeGreaterThanOrEqual(7);
  });
});
