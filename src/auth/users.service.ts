import { ConflictException, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { hashSecret, verifySecret } from '../common/crypto/secret-hash';
import { isUniqueViolation } from '../infra/database/pg-errors';
import { User } from './user.entity';

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

@Injectable()
export class UsersService {
  constructor(@InjectRepository(User) private readonly users: Repository<User>) {}

  async create(clientId: string, username: string, password: string): Promise<User> {
    try {
      return await this.users.save(this.users.create({ clientId, username, passwordHash: await hashSecret(password) }));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictException(`User ${username} already exists`);
      throw error;
    }
  }

  /** Creates the user or, when it exists for the same client, resets its password (used by seed). */
  async upsert(clientId: string, username: string, password: string): Promise<User> {
    const existing = await this.users.findOneBy({ username });
    if (!existing) return this.create(clientId, username, password);
    if (existing.clientId !== clientId) throw new ConflictException(`User ${username} belongs to another client`);
    existing.passwordHash = await hashSecret(password);
    return this.users.save(existing);
  }

  async verify(username: string, password: string): Promise<User | null> {
    const user = await this.users.findOneBy({ username });
    // An unknown username costs a verification too, so both failures take the same time.
    return (await verifySecret(user?.passwordHash, password)) ? user : null;
  }
}
