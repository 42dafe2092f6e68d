import { ConflictException, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../infra/database/pg-errors';
import { Client } from './client.entity';

@Injectable()
export class ClientsService {
  constructor(@InjectRepository(Client) private readonly clients: Repository<Client>) {}

  async create(code: string, name: string): Promise<Client> {
    try {
      return await this.clients.save(this.clients.create({ code, name }));
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
}
