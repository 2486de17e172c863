import { describe, expect, it } from 'vitest';
import { migrate, openDatabase, shownUrl } from '../../src/postgres/database.js';
import { UserError } from '../../src/errors.js';
import { freshDatabase } from '../support/postgres.js';

describe('the Postgres door', () => {
  it('migrates each part to its newest version once, however many processes start together', async () => {
    const url = await freshDatabase();
    const dbs = await Promise.all([openDatabase(url), openDatabase(url), openDatabase(url)]);
    const steps = [
      'create table meta_agent.things (id int primary key)',
      'alter table meta_agent.things add column name text',
    ];
    await Promise.all(dbs.map((db) => migrate(db, 'things', steps)));
    const [db] = dbs;
    const { rows } = await db!.pool.query(`select part, version from meta_agent.migrations`);
    expect(rows).toEqual([{ part: 'things', version: 2 }]);
    await db!.pool.query(`insert into meta_agent.things (id, name) values (1, 'one')`);
    await Promise.all(dbs.map((each) => each.close()));
  });

  it('refuses tables newer than it knows, saying what to do', async () => {
    const url = await freshDatabase();
    const db = await openDatabase(url);
    await migrate(db, 'things', ['select 1', 'select 2']);
    await expect(migrate(db, 'things', ['select 1'])).rejects.toThrow(
      /version 2, newer than this meta-agent knows \(1\)/,
    );
    await db.close();
  });

  it('says in one line why a server cannot be used, never showing the password', async () => {
    const refused = openDatabase('postgres://me:secret@127.0.0.1:9/nothing');
    await expect(refused).rejects.toBeInstanceOf(UserError);
    await expect(refused).rejects.toThrow(
      /cannot use the database at postgres:\/\/me:\*\*\*@127\.0\.0\.1:9\/nothing/,
    );
    await expect(refused).rejects.not.toThrow(/secret/);
    expect(() => shownUrl('mysql://x')).toThrow(/must start with postgres:\/\//);
    expect(() => shownUrl('not a url')).toThrow(/not a URL/);
  });

  it('names a database that does not exist', async () => {
    const url = new URL(await freshDatabase());
    url.pathname = '/no_such_database';
    await expect(openDatabase(url.toString())).rejects.toThrow(/create the database first|does not exist/);
  });
});
