import { readFile } from 'node:fs/promises';
import { DplabError } from '../base/errors.ts';
import {
  FORMATS,
  ParseError,
  commandsToRead,
  findFrontend,
  findService,
  isFormat,
  parse,
  toJson,
  toMermaid,
  toText,
  type Format,
  type ParseOptions,
} from '../dataplane/index.ts';
import { parseFlags, usageError, type Command, type CommandContext } from './command.ts';
import { commandInfo } from './catalogue.ts';
import { parseModeArg } from '../clusters/mode-arg.ts';
import { isServiceRef } from '../dataplane/explain-view.ts';
import { isCidr } from '../dataplane/addr.ts';
import { explainLive } from '../dataplane/live.ts';

export { commandsToRead };

export const explain: Command = {
  ...commandInfo('explain'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(explain, argv, {
      input: { type: 'string' },
      format: { type: 'string' },
      service: { type: 'string' },
      frontend: { type: 'string' },
      json: { type: 'boolean' },
      mermaid: { type: 'boolean' },
      names: { type: 'string' },
      hz: { type: 'string' },
      node: { type: 'string' },
      'service-cidr': { type: 'string' },
    });
    if (!values.input) {
      if (positionals.length === 2) return explainLiveCommand(positionals[0], positionals[1], values, ctx);
      throw usageError(explain, 'give --input <file> and --format, or <mode> <ns/name>.');
    }
    if (positionals.length) throw usageError(explain, `unexpected argument "${positionals[0]}".`);
    if (!values.format || !isFormat(values.format)) throw usageError(explain, `--format must be one of ${FORMATS.join(', ')}.`);
    if (Boolean(values.service) === Boolean(values.frontend))
      throw usageError(explain, 'give exactly one of --service <ns/name> or --frontend <ip:port>.');
    if (values.json && values.mermaid) throw usageError(explain, '--json and --mermaid cannot be combined.');
    const format: Format = values.format;
    const opts: ParseOptions = {};
    if (values.names) opts.names = await readNames(values.names);
    if (values.hz) {
      const hz = Number(values.hz);
      if (!Number.isInteger(hz) || hz <= 0) throw usageError(explain, '--hz must be a positive integer (100, 250, 300 or 1000).');
      opts.hz = hz;
    }
    if (values['service-cidr'] !== undefined) {
      const cidrs = values['service-cidr'].split(',').map((c) => c.trim());
      if (!cidrs.every(isCidr))
        throw usageError(
          explain,
          '--service-cidr must be CIDRs such as 10.96.0.0/16 or fd00:10:96::/112 (comma-separated for dual-stack).',
        );
      opts.serviceCidr = cidrs;
    }
    const text = await readInput(values.input);
    let model;
    try {
      model = parse(format, text, opts);
    } catch (err) {
      if (err instanceof ParseError) {
        throw new DplabError(`${values.input} is not ${format} output this parser understands`, {
          details: err.message,
          fix: `Check --format; the file should be the output of: ${commandsToRead(format).join(' ')}`,
          status: 400,
        });
      }
      throw err;
    }
    const view = values.service ? findService(model, values.service) : findFrontend(model, values.frontend ?? '');
    if (!view) {
      const what = values.service ? `Service ${values.service}` : `frontend ${values.frontend}`;
      const known = model.services.map((s) => s.service).filter((s): s is string => s !== null);
      throw new DplabError(`${what} is not in ${values.input}`, {
        fix: known.length
          ? `Services present: ${[...new Set(known)].join(', ')}`
          : 'This output does not name Services: use --frontend <ip:port> or --names.',
        details: 'Headless Services (clusterIP: None) never appear: no proxy rules are written for them.',
        status: 404,
      });
    }
    const out = values.json ? `${JSON.stringify(toJson(view), null, 2)}\n` : values.mermaid ? toMermaid(view, format) : toText(view, model);
    ctx.stdout.write(out);
    return 0;
  },
};

/** The live form: the same output as the file form, read from a running cluster's node. */
async function explainLiveCommand(
  modeArg: string,
  service: string,
  values: {
    json?: boolean;
    mermaid?: boolean;
    node?: string;
    format?: string;
    service?: string;
    frontend?: string;
    names?: string;
    hz?: string;
    'service-cidr'?: string;
  },
  ctx: CommandContext,
): Promise<number> {
  const mode = parseModeArg(explain, modeArg);
  if (!isServiceRef(service))
    throw usageError(explain, `"${service.slice(0, 80)}" is not a Service: give namespace/name, e.g. default/web.`);
  const fileOnly = (['format', 'service', 'frontend', 'names', 'hz', 'service-cidr'] as const).find((k) => values[k] !== undefined);
  if (fileOnly) throw usageError(explain, `--${fileOnly} belongs to the --input form; the live form reads the format of the mode itself.`);
  if (values.json && values.mermaid) throw usageError(explain, '--json and --mermaid cannot be combined.');
  const r = await explainLive(mode, service, { node: values.node });
  const out = values.json
    ? `${JSON.stringify({ service: r.service, frontends: r.frontends }, null, 2)}\n`
    : values.mermaid
      ? r.mermaid
      : `${r.node}, ${r.format}:\n${r.text}`;
  ctx.stdout.write(out);
  return 0;
}

async function readInput(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new DplabError(`cannot read ${path}`, { details: err instanceof Error ? err.message : String(err), status: 400 });
  }
}

async function readNames(path: string): Promise<Record<string, string>> {
  const text = await readInput(path);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DplabError(`${path} is not JSON`, { details: err instanceof Error ? err.message : String(err), status: 400 });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw new DplabError(`${path} must map "ip:port" to "namespace/name"`, { status: 400 });
  }
  return value as Record<string, string>;
}
