/**
 * Click-to-run commands, one at a time. A command typed into a shell that is still busy with the
 * one before goes into that command's stdin, and both echo into one another on the screen. So a
 * Run (or Type) while the last one has not brought the prompt back waits here, and goes when the
 * shell marks its next prompt (SHELL_PROMPT_OSC in the lab shell's prompt, terminal-element.ts).
 *
 * Only a shell that has marked a prompt at least once is waited on: an older runner, a node
 * shell, or a learner's rc that replaces the prompt never marks one, and there every command
 * goes at once, as before. The queue is bounded, and the learner can empty it (Esc).
 */

/** How many commands may wait at once; a further one is refused, and says so. */
export const RUN_QUEUE_MAX = 5;

/** What happened to one command: sent to the shell, waiting for the prompt, refused (queue full), or dropped (cleared, or the shell went away). */
export type RunState = 'sent' | 'queued' | 'full' | 'dropped';

export interface Run {
  text: string;
  /** With Enter (Run), or typed for the learner to finish (Type). */
  execute: boolean;
  /** Told each time this command's state changes. */
  onState?: (state: RunState) => void;
}

export class RunQueue {
  readonly #write: (data: string) => void;
  readonly #changed: (waiting: number) => void;
  readonly #max: number;
  #waiting: Run[] = [];
  /** The shell has marked a prompt: it will mark the next one too. */
  #marks = false;
  /** Something went to the shell after its last prompt: the next prompt has not come yet. */
  #busy = false;
  /** Lines the learner typed, Enter included, while a command ran: the shell runs each before a waiting Run. */
  #ahead = 0;
  /** The learner has typed part of a line (no Enter yet): a waiting Run must not land in the middle of it. */
  #partial = false;
  /** A Type put a command at the prompt: the learner's next Enter runs it (it is not typed ahead). */
  #awaitingEnter = false;

  constructor(write: (data: string) => void, changed: (waiting: number) => void = () => {}, max = RUN_QUEUE_MAX) {
    this.#write = write;
    this.#changed = changed;
    this.#max = max;
  }

  /** Commands waiting for the prompt. */
  get waiting(): number {
    return this.#waiting.length;
  }

  submit(run: Run): RunState {
    if (!this.#marks || (!this.#busy && this.#waiting.length === 0)) {
      this.#send(run);
      return 'sent';
    }
    if (this.#waiting.length >= this.#max) {
      run.onState?.('full');
      return 'full';
    }
    this.#waiting.push(run);
    run.onState?.('queued');
    this.#changed(this.#waiting.length);
    return 'queued';
  }

  /**
   * The learner's own keys, as sent to the shell. Typed while a command runs, they wait in the
   * terminal's input for the next prompt, so a waiting Run goes after them, never into them.
   */
  typed(data: string): void {
    for (const ch of data) {
      if (ch === '\r') {
        if (!this.#marks) continue;
        if (this.#awaitingEnter) this.#awaitingEnter = false;
        else if (this.#busy) this.#ahead += 1;
        this.#busy = true;
        this.#partial = false;
      } else if (ch === '\x03') {
        // Ctrl-C: the line (or the command) is given up; the shell marks a new prompt.
        this.#partial = false;
      } else if (ch >= ' ' || ch === '\t') this.#partial = true;
    }
  }

  /** The learner pressed Enter themselves: a prompt follows whatever it started. */
  entered(): void {
    this.typed('\r');
  }

  /** The shell marked a prompt: it is free, and the next waiting command goes. */
  prompt(): void {
    this.#marks = true;
    if (this.#ahead > 0) {
      // A line the learner typed ahead runs now; its own prompt comes next.
      this.#ahead -= 1;
      this.#busy = true;
      return;
    }
    this.#busy = false;
    // The learner is writing a line at this prompt: waiting Runs go after their Enter.
    if (this.#partial) return;
    const next = this.#waiting.shift();
    if (!next) return;
    this.#send(next);
    this.#changed(this.#waiting.length);
  }

  /** Drop every waiting command (the learner asked to); the one running goes on. */
  clear(): number {
    const dropped = this.#waiting;
    this.#waiting = [];
    dropped.forEach((r) => r.onState?.('dropped'));
    if (dropped.length) this.#changed(0);
    return dropped.length;
  }

  /** A new shell (reconnect, mode switch): nothing waits for the old one's prompt. */
  reset(): void {
    this.clear();
    this.#marks = false;
    this.#busy = false;
    this.#ahead = 0;
    this.#partial = false;
    this.#awaitingEnter = false;
  }

  #send(run: Run): void {
    this.#write(run.execute ? `${run.text}\r` : run.text);
    // A typed (not run) command is the learner's until they press Enter, which brings the prompt.
    if (this.#marks) this.#busy = true;
    if (this.#marks && !run.execute) this.#awaitingEnter = true;
    run.onState?.('sent');
  }
}
