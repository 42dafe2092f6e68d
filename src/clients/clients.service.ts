import { ConflictException, Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { CallbackSettingsService } from './callback-settings.service';
import { isUniqueViolation } from '../common/errors/pg-errors';
import { Client } from './client.entity';

@Injectable()
export class ClientsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectRepository(Client) private readonly clients: Repository<Client>,
    private readonly callbackSettings: CallbackSettingsService,
  ) {}

  /** The client and its callback signing secret are created together, so every client can sign from the start. */
  async create(code: string, name: string): Promise<Client> {
    try {
      return await this.db.transaction(async (manager) => {
        const client = await manager.save(this.clients.create({ code, name }));
        await this.callbackSettings.createSigningSecret(manager, client.id);
        return client;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictException(`Client ${code} already exists`);
      throw error;
    }
  }

  findByCode(code: string): Promise<Client | null> {
    return this.clients.findOneBy({ code });
  }

  findById(id: string): Promise<Client | null> {
    return this.clients.findOneBy({ id });
  }

  /**
   * Sets the time zone the client's days are counted in (the portal's overview and date filters): an IANA name
   * Postgres knows, which is where the days are computed. False (nothing changed) for a name it does not know.
   */
  async setTimeZone(clientId: string, timeZone: string): Promise<boolean> {
    const [, changed]: [unknown, number] = await this.db.query(
      `UPDATE clients SET time_zone = $2 WHERE id = $1 AND EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = $2)`,
      [clientId, timeZone],
    );
    return changed === 1;
  }
}
