import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

export type ProfileType = 'BUSINESS' | 'INDIVIDUAL';

/** An individual or a business that holds wallets. */
@Entity('profiles')
export class Profile {
  @PrimaryGeneratedColumn('uuid') id: string;
  @Column({ name: 'client_id' }) clientId: string;
  @Column({ name: 'client_profile_id' }) clientProfileId: string;
  @Column({ name: 'profile_name' }) profileName: string;
  @Column({ name: 'profile_type' }) profileType: ProfileType;
  @Column({ name: 'profile_email' }) profileEmail: string;
  @Column({ name: 'profile_msisdn' }) profileMsisdn: string;
  @Column({ name: 'contact_person_name' }) contactPersonName: string;
  @Column({ name: 'contact_person_email' }) contactPersonEmail: string;
  @Column({ name: 'contact_person_msisdn' }) contactPersonMsisdn: string;
  @Column({ name: 'identification_number' }) identificationNumber: string;
  @Column({ name: 'physical_address' }) physicalAddress: string;
  @Column() country: string;
  @Column({ type: 'varchar', nullable: true }) description: string | null;
  @Column({ name: 'is_active', type: 'smallint' }) isActive: number;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
