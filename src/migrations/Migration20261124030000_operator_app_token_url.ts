import { Migration } from '@mikro-orm/migrations';

export class Migration20261124030000_operator_app_token_url extends Migration {

  override name = 'Migration20261124030000_operator_app_token_url';

  override up(): void | Promise<void> {
    this.addSql(`alter table "operator_oauth_apps" add column "token_url" text null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "operator_oauth_apps" drop column "token_url";`);
  }

}
