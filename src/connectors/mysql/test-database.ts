import mysql from 'mysql2/promise';

/** Where tests find MySQL or MariaDB as an administrator (TEST_MYSQL_URL overrides). */
export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/';

export interface MysqlTestDatabase {
  name: string;
  /** A URL of the database as the administrator. */
  url: string;
  /** A user allowed only this database, with a password (for credential tests). */
  user: { name: string; password: string };
  /** An administrator session in the database, for setting up and changing rows. */
  admin: mysql.Connection;
  drop(): Promise<void>;
}

/** A fresh database and user on the test server; `drop` removes both. */
export async function createMysqlTestDatabase(): Promise<MysqlTestDatabase> {
  const suffix = `${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const name = `catchment_test_${suffix}`;
  const user = { name: `catchment_${suffix}`.slice(0, 32), password: `pw-${Math.random().toString(36).slice(2)}` };
  const admin = await mysql.createConnection({ uri: MYSQL_ADMIN_URL, multipleStatements: true, dateStrings: true });
  await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  await admin.query(`CREATE USER '${user.name}'@'%' IDENTIFIED BY '${user.password}'`);
  await admin.query(`GRANT SELECT ON \`${name}\`.* TO '${user.name}'@'%'`);
  await admin.query(`USE \`${name}\``);
  const url = new URL(MYSQL_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    user,
    admin,
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.query(`DROP USER IF EXISTS '${user.name}'@'%'`);
      await admin.end();
    },
  };
}
