import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** A wallet type ("account type" in the interface): classifies wallets. */
@Entity('account_types')
export class AccountType {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'client_id' }) clientId: string;
  @Column({ insert: false }) code: string;
  @Column() name: string;
  @Column({ type: 'varchar', nullable: true }) description: string | null;
  @Column({ name: 'is_active', type: 'smallint' }) isActive: number;
  @Column({ name: 'is_mandatory_account', type: 'smallint', default: 0 }) isMandatoryAccount: number;
  @Column({ name: 'is_default', type: 'smallint', default: 0 }) isDefault: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
