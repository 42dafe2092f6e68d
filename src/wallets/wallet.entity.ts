import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const WALLET_STATUSES = ['PRE_ACTIVE', 'ACTIVE', 'DORMANT', 'SUSPENDED', 'CLOSED'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/** What the merchant sees of a wallet; its money lives in the ledger account with the same id. */
@Entity('wallets')
export class Wallet {
  @PrimaryColumn('uuid') id: string;
  @Column({ name: 'client_id' }) clientId: string;
  @Column({ name: 'profile_id' }) profileId: string;
  @Column({ name: 'account_type_id' }) accountTypeId: string;
  @Column({ name: 'account_name' }) accountName: string;
  @Column({ type: 'varchar' }) status: WalletStatus;
  @Column({ name: 'status_description', type: 'varchar', nullable: true }) statusDescription: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
