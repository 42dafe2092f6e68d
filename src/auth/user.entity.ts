import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A wallet-service user; belongs to one client and acts only for it. */
@Entity('users')
export class User {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'client_id' }) clientId: string;
  @Column() username: string;
  @Column({ name: 'password_hash' }) passwordHash: string;
  /** Raised by every password reset; wallet tokens issued under an older version are refused. */
  @Column({ name: 'token_version', default: 0 }) tokenVersion: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
