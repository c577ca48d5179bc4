// c15t (@c15t/backend, PostgreSQL through its kysely adapter) for `make bench`: migrates its schema,
// records SUBJECTS subjects (their ids to $C15T_WORK/c15t_subjects.txt, for the read load), then
// serves on 127.0.0.1 (an ephemeral port, printed as "c15t listening on URL").
import { writeFileSync } from 'node:fs';
import { serve } from '@hono/node-server';
import { c15tInstance } from '@c15t/backend';
import { kyselyAdapter } from '@c15t/backend/db/adapters/kysely';
import { DB } from '@c15t/backend/db/schema';
import { migrator } from '@c15t/backend/db/migrator';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

const url = process.env.C15T_DB_URL;
const work = process.env.C15T_WORK;
const pool = new pg.Pool({ connectionString: url, max: 8 });
const kysely = new Kysely({ dialect: new PostgresDialect({ pool }) });
const adapter = kyselyAdapter({ db: kysely, provider: 'postgresql' });

const client = DB.client(adapter);
const result = await migrator({ db: client, schema: 'latest' });
if (result && typeof result.execute === 'function') await result.execute();

const instance = c15tInstance({
  appName: 'c15t-bench',
  adapter,
  trustedOrigins: ['http://127.0.0.1'],
  logger: { level: 'error' },
});

const B58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const subjectId = () => 'sub_' + Array.from({ length: 16 }, () => B58[Math.floor(Math.random() * 58)]).join('');
export const body = (id) => JSON.stringify({
  subjectId: id, domain: 'bench.example', type: 'cookie_banner', givenAt: Date.now(),
  preferences: { necessary: true, measurement: true, marketing: false },
});

const ids = [];
for (let i = 0; i < Number(process.env.C15T_SUBJECTS || 1000); i++) {
  const id = subjectId();
  const res = await instance.handler(new Request('http://127.0.0.1/subjects', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: body(id) }));
  if (res.status >= 300) {
    console.error(`c15t: recording a subject answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    process.exit(1);
  }
  ids.push(id);
}
writeFileSync(`${work}/c15t_subjects.txt`, ids.join('\n') + '\n');
const check = await instance.handler(new Request(`http://127.0.0.1/subjects/${ids[0]}`));
if (check.status !== 200) {
  console.error(`c15t: reading a subject answered ${check.status}: ${(await check.text()).slice(0, 300)}`);
  process.exit(1);
}

const server = serve({ fetch: instance.app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  console.log(`c15t listening on http://127.0.0.1:${info.port}`);
});
process.on('SIGTERM', () => { server.close(); pool.end(); process.exit(0); });
