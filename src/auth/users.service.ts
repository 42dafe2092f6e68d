import { ConflictException, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import * as argon2 from 'argon2';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { isUniqueViolation } from '../infra/database/pg-errors';
import { CredentialStatusService } from './credential-status.service';
import { User } from './user.entity';

/** Verified against when the username is unknown, so both failures take the same time. */
const DUMMY_HASH = '$argon2id$v=19$m=65536,t=3,p=4$c29tZXNhbHRzb21lc2FsdA$2y6hPq0yG7fNQm5wR0m8bB8i1xDNh3fJf5pEwWZpK1c';

export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    private readonly credentials: CredentialStatusService,
  ) {}

  async create(clientId: string, username: string, password: string): Promise<User> {
    try {
      return await this.users.save(this.users.create({ clientId, username, passwordHash: await argon2.hash(password) }));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictException(`User ${username} already exists`);
      throw error;
    }
  }

  /**
   * Creates the user or, when it exists for the same client, resets its password (seed, user:create --password).
   * A reset raises the token version, so every wallet token issued before it stops working.
   */
  async upsert(clientId: string, username: string, password: string): Promise<User> {
    const existing = await this.users.findOneBy({ username });
    if (!existing) return this.create(clientId, username, password);
    if (existing.clientId !== clientId) throw new ConflictException(`User ${username} belongs to another client`);
    const passwordHash = await argon2.hash(password);
    const [[reset]] = await this.users.query(
      `UPDATE users SET password_hash = $2, token_version = token_version + 1, updated_at = now() WHERE id = $1 RETURNING token_version`,
      [existing.id, passwordHash],
    );
    this.credentials.forgetUser(existing.id);
    return Object.assign(existing, { passwordHash, tokenVersion: reset.token_version });
  }

  async verify(username: string, password: string): Promise<User | null> {
    const user = await this.users.findOneBy({ username });
    const valid = await argon2.verify(user?.passwordHash ?? DUMMY_HASH, password).catch(() => false);
    return user && valid ? user : null;
  }
}
