import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { ClientsService } from '../clients/clients.service';
import { isUniqueViolation } from '../common/errors/pg-errors';
import { WalletsService } from './wallets.service';
import { CreateProfileDto, PROFILE_COMMANDS } from './profile.dto';
import { Profile } from './profile.entity';
import { createdProfileRecord, profileFields, profileStatus } from './profile.presenter';

@Injectable()
export class ProfilesService {
  constructor(
    @InjectRepository(Profile) private readonly profiles: Repository<Profile>,
    private readonly clients: ClientsService,
    private readonly wallets: WalletsService,
  ) {}

  async create(principal: WalletPrincipal, dto: CreateProfileDto) {
    const profile = this.profiles.create({
      clientId: principal.clientId,
      clientProfileId: dto.client_profile_id,
      profileName: dto.profile_name,
      profileType: dto.profile_type,
      profileEmail: dto.profile_email,
      profileMsisdn: dto.profile_msisdn,
      contactPersonName: dto.contact_person_name,
      contactPersonEmail: dto.contact_person_email,
      contactPersonMsisdn: dto.contact_person_msisdn,
      identificationNumber: dto.identification_number,
      physicalAddress: dto.physical_address,
      country: dto.country,
      description: dto.description ?? null,
      isActive: dto.is_active,
    });
    try {
      await this.profiles.insert(profile);
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictException(`Profile ${dto.client_profile_id} already exists`);
      throw error;
    }
    const saved = await this.profiles.findOneByOrFail({ id: profile.id });
    return createdProfileRecord(saved, { code: principal.clientCode });
  }

  async fetch(principal: WalletPrincipal, clientProfileId: string) {
    const profile = await this.findOwned(principal, clientProfileId);
    const client = await this.clients.findById(principal.clientId);
    return {
      ...profileFields(profile, { code: principal.clientCode }),
      client: { client_id: principal.clientId, client_code: client!.code },
      accounts: await this.wallets.summariesOfProfile(profile.id),
    };
  }

  async applyCommand(principal: WalletPrincipal, clientProfileId: string, command: (typeof PROFILE_COMMANDS)[number]) {
    const profile = await this.findOwned(principal, clientProfileId);
    const isActive = command === 'ACTIVATE' ? 1 : 0;
    if (profile.isActive !== isActive) {
      await this.profiles.update({ id: profile.id }, { isActive });
      profile.isActive = isActive;
    }
    const status = profileStatus(profile);
    return { id: profile.clientProfileId, status, message: `Profile ${status === 'ACTIVE' ? 'activated' : 'deactivated'} successfully` };
  }

  /** Another client's profile is reported exactly as a missing one. */
  async findOwned(principal: WalletPrincipal, clientProfileId: string): Promise<Profile> {
    const profile = await this.profiles.findOneBy({ clientId: principal.clientId, clientProfileId });
    if (!profile) throw new NotFoundException('Profile not found');
    return profile;
  }
}
