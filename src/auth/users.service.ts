import { ConflictException, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { Repository } from 'typeorm';
import { hashSecret, verifySecret } from '../common/crypto/secret-hash';
import { isUniqueViolation } from '../common/errors/pg-errors';
import { CREDENTIAL_CHANNEL, CredentialStatusService } from './credential-status.service';
import { User } from './user.entity';

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
      return await this.users.save(this.users.create({ clientId, username, passwordHash: await hashSecret(password) }));
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictException(`User ${username} already exists`);
      throw error;
    }
  }

  /**
   * Creates the user or, when it exists for the same client, resets its password (seed, user:create --password).
   * A reset raises the token version, so every wallet token issued before it stops working, on every process from
   * the commit on (announced on CREDENTIAL_CHANNEL in the same statement).
   */
  async upsert(clientId: string, username: string, password: string): Promise<User> {
    const existing = await this.users.findOneBy({ username });
    if (!existing) return this.create(clientId, username, password);
    if (existing.clientId !== clientId) throw new ConflictException(`User ${username} belongs to another client`);
    const passwordHash = await hashSecret(password);
    const [reset] = await this.users.query(
      `WITH reset AS (
         UPDATE users SET password_hash = $2, token_version = token_version + 1, updated_at = now() WHERE id = $1 RETURNING id, token_version
       )
       SELECT token_version, pg_notify($3, 'user:' || id) FROM reset`,
      [existing.id, passwordHash, CREDENTIAL_CHANNEL],
    );
    this.credentials.forgetUser(existing.id);
    return Object.assign(existing, { passwordHash, tokenVersion: reset.token_version });
  }

  async verify(username: string, password: string): Promise<User | null> {
    const user = await this.users.findOneBy({ username });
    // An unknown username costs a verification too, so both failures take the same time.
    return (await verifySecret(user?.passwordHash, password)) ? user : null;
  }
}
