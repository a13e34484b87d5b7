/**
 * `stride` — the operator's command line (README, "Command line"). Reads the same environment as the server.
 * Every command prints JSON on stdout with --json; a failure prints one line on stderr and exits 1.
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { COMMANDS, type CommandResult } from './cli/commands.js';
import { loadConfig } from './config.js';

/** What one run of `stride` reads its settings from and writes to: the process's own, or a test's. */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdin: AsyncIterable<string | Buffer>;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

export const USAGE = `Usage: stride <command> [options]

Commands:
  serve                                     run the server (what npm start runs)
  migrate                                   apply schema migrations
  users create --email E --password P [--name N]
  users set-password --email E --password P
                                            for a person who cannot sign in; ends their sessions;
                                            --password-stdin instead of --password P reads it from
                                            standard input, out of ps and the shell's history
  users reset-link --email E                a link to set a new password: usable once, for one hour;
                                            using it ends every session of theirs
  users delete --email E                    the account and all its data (not while it owns apps)
  apps create --owner E --name N --redirect-uri U [--redirect-uri U2 …] --scopes s1,s2 [--public]
                                            [--grant-types g1,g2] [--require-dpop] [--require-par yes|no]
  apps update CLIENT_ID [--name N] [--scopes s1,s2] [--redirect-uri U …] [--grant-types g1,g2]
                                            [--[no-]require-dpop] [--require-par yes|no]
                                            --require-par yes: authorization requests only through
                                            PAR (RFC 9126)
  apps rotate-secret CLIENT_ID
  apps fitbit-subscriber CLIENT_ID [--url U] [--subscriber-id ID] [--verification-code C]
                                            [--client-secret-stdin | --rotate-secret]
                                            [--verify-again] [--remove]
                                            the app's Fitbit-compatible subscriber: shown, set, verified
                                            again or removed; a new one needs the client secret (read
                                            from standard input, or a new one issued and shown here)
  apps delete CLIENT_ID
  apps list [--owner E]
  registration-token create [--expires-in SECONDS]
                                            an initial access token for REGISTRATION=token (RFC 7591),
                                            shown only here
  import --user E FILE                      a person's export (/account/export.json): every kind in it
  import --user E --kind K FILE             one kind K: steps, distance, calories (CSV start_time,value),
                                            heartrate (CSV time,bpm), weight (CSV time,kg,fat_percent),
                                            sleep (JSON lines, a session a line); all or nothing
  import --takeout FILE --user E            a Google Takeout archive of Fitbit data: every kind it holds,
                                            with progress on standard error and the report on standard
                                            output; run again to carry on an interrupted import
  steps import --user E FILE                the same as import --kind steps
  webhooks add CLIENT_ID --url U --events e1,e2
                                            prints the endpoint's id and its secret (shown only here)
  webhooks list CLIENT_ID
  webhooks update ID [--url U] [--events e1,e2] [--paused|--active]
  webhooks rotate-secret ID                 a new secret; the old one signs too for 24 hours
  webhooks delete ID
  backup FILE                               a consistent copy of the SQLite database, while it serves
  restore FILE                              put a backup back (stop the server first)
  demo                                      a demo user, app and 90 days of data of every kind
  sandbox add --owner E                     test people for developer E: one of each life, with
                                            SANDBOX_DAYS (90) days of data; they cannot sign in
  sandbox list --owner E                    developer E's test people

Options:
  --json                                    print the result as JSON on stdout
  --help                                    show this help

Configuration comes from the environment (DATABASE_URL, PUBLIC_URL, …); see README.md.`;

const OPTIONS: ParseArgsConfig['options'] = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  email: { type: 'string' },
  password: { type: 'string' },
  'password-stdin': { type: 'boolean' },
  name: { type: 'string' },
  owner: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  scopes: { type: 'string' },
  'grant-types': { type: 'string' },
  public: { type: 'boolean' },
  'require-dpop': { type: 'boolean' },
  'no-require-dpop': { type: 'boolean' },
  'require-par': { type: 'string' },
  'expires-in': { type: 'string' },
  user: { type: 'string' },
  kind: { type: 'string' },
  takeout: { type: 'string' },
  metric: { type: 'string' },
  url: { type: 'string' },
  events: { type: 'string' },
  paused: { type: 'boolean' },
  active: { type: 'boolean' },
  'subscriber-id': { type: 'string' },
  'verification-code': { type: 'string' },
  'client-secret-stdin': { type: 'boolean' },
  'rotate-secret': { type: 'boolean' },
  'verify-again': { type: 'boolean' },
  remove: { type: 'boolean' },
};

/** Runs `stride ARGV`; resolves to the exit code (`serve` resolves once it listens). */
export async function runStride(argv: string[], io: CliIo): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return fail(io, `${(error as Error).message.split('\n')[0]} (see stride --help)`);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  const positionals = parsed.positionals;
  if (values.help || positionals.length === 0) {
    io.stdout.write(`${USAGE}\n`);
    return positionals.length === 0 && !values.help ? 1 : 0;
  }

  const twoWord = `${positionals[0]} ${positionals[1] ?? ''}`.trim();
  const name = COMMANDS[twoWord] ? twoWord : positionals[0]!;
  const command = COMMANDS[name];
  if (!command) return fail(io, `unknown command "${twoWord}" (see stride --help)`);
  const args = positionals.slice(name.split(' ').length);

  try {
    const config = loadConfig(io.env);
    const progress = (line: string) => io.stderr.write(`stride: ${line}\n`);
    const result: CommandResult = await command({ config, values, args, readStdin: () => readAll(io.stdin), progress });
    if (result === undefined) return 0;
    io.stdout.write(values.json ? `${JSON.stringify(result.json, null, 2)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    // Config, validation and command errors all carry a message meant for the operator.
    return fail(io, error instanceof Error ? error.message : String(error));
  }
}

async function readAll(stream: AsyncIterable<string | Buffer>): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
  return text;
}

function fail(io: CliIo, reason: string): number {
  io.stderr.write(`stride: ${reason.split('\n')[0]}\n`);
  return 1;
}

/** Runs `stride` as this process: its arguments, environment and output, and exits with the code. */
export function runStrideProcess(): void {
  const io: CliIo = { env: process.env, stdin: process.stdin, stdout: process.stdout, stderr: process.stderr };
  runStride(process.argv.slice(2), io).then(
    (code) => {
      // `serve` keeps the process alive through its listening socket; everything else ends here.
      if (code !== 0 || !['serve'].includes(process.argv[2] ?? '')) process.exit(code);
    },
    (error: unknown) => {
      fail(io, error instanceof Error ? error.message : String(error));
      process.exit(1);
    },
  );
}
