/**
 * What a portal started again after a crash or `kill -9` needs to take its workshop back
 * (issue 36, item 6): the workshop's code (and the instructor's token when the portal made it),
 * and per seat its runner's token, its learner and that learner's token, so the learner's link
 * keeps working. One file per seat, so one damaged file costs one seat, not the class.
 *
 * Files are written whole (writeFileAtomic) and hold tokens: 0600 in a 0700 folder of the
 * portal's user, which no seat user can enter.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../base/atomic-file.ts';
import { isSeatId } from '../wire/seat.ts';

const SECRET = { mode: 0o600, dirMode: 0o700 } as const;
const VERSION = 1;

const token = z.string().min(16).max(200);

const seatRecordSchema = z
  .object({
    v: z.literal(VERSION),
    id: z.string().refine(isSeatId, 'not a seat id'),
    runnerToken: token,
    learner: z
      .object({
        name: z.string().max(200),
        joinedAt: z.number(),
        client: z.string().max(200).optional(),
        /** The learner's token: their page keeps it, and it names this seat again after a restart. */
        token,
      })
      .strict()
      .optional(),
  })
  .strict();
export type SeatRecord = z.infer<typeof seatRecordSchema>;

const workshopRecordSchema = z
  .object({
    v: z.literal(VERSION),
    code: z.string().min(4).max(40),
    /** Only a token the portal made: one the operator chose (DPLAB_PORTAL_TOKEN) stays theirs. */
    instructorToken: token.optional(),
  })
  .strict();
export type WorkshopRecord = z.infer<typeof workshopRecordSchema>;

/** A stored seat: its record, none (the seat was made before records were kept, or its file is gone), or a file that does not read. */
export type StoredSeat = { ok: true; record: SeatRecord } | { ok: false; missing: true } | { ok: false; missing: false; problem: string };

export class WorkshopStore {
  constructor(readonly dir: string) {}

  #seatFile(id: string): string {
    return join(this.dir, 'seats', `${id}.json`);
  }

  readWorkshop(): WorkshopRecord | null {
    try {
      return workshopRecordSchema.parse(JSON.parse(readFileSync(join(this.dir, 'workshop.json'), 'utf8')));
    } catch {
      return null;
    }
  }

  writeWorkshop(record: Omit<WorkshopRecord, 'v'>): void {
    writeFileAtomic(join(this.dir, 'workshop.json'), JSON.stringify({ v: VERSION, ...record }), SECRET);
  }

  /** Ids of the seats with a file (whether or not it reads). */
  seatIds(): string[] {
    try {
      return readdirSync(join(this.dir, 'seats'))
        .flatMap((f) => (f.endsWith('.json') ? [f.slice(0, -5)] : []))
        .filter(isSeatId)
        .sort();
    } catch {
      return [];
    }
  }

  readSeat(id: string): StoredSeat {
    let text: string;
    try {
      text = readFileSync(this.#seatFile(id), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { ok: false, missing: true };
      return { ok: false, missing: false, problem: (err as Error).message };
    }
    try {
      const parsed = seatRecordSchema.safeParse(JSON.parse(text));
      if (!parsed.success)
        return { ok: false, missing: false, problem: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
      if (parsed.data.id !== id) return { ok: false, missing: false, problem: `it names seat ${parsed.data.id}` };
      return { ok: true, record: parsed.data };
    } catch (err) {
      return { ok: false, missing: false, problem: `not JSON (${(err as Error).message})` };
    }
  }

  writeSeat(record: Omit<SeatRecord, 'v'>): void {
    writeFileAtomic(this.#seatFile(record.id), JSON.stringify({ v: VERSION, ...record }), SECRET);
  }

  removeSeat(id: string): void {
    rmSync(this.#seatFile(id), { force: true });
  }
}
