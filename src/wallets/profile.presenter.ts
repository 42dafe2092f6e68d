import { Client } from '../clients/client.entity';
import { Profile } from './profile.entity';

export function profileStatus(profile: Profile): 'ACTIVE' | 'INACTIVE' {
  return profile.isActive === 1 ? 'ACTIVE' : 'INACTIVE';
}

/** The profile fields as the merchant sent them; msisdns as strings (the fetch shape). */
export function profileFields(profile: Profile, client: Pick<Client, 'code'>) {
  return {
    profile_id: profile.id,
    client_code: client.code,
    profile_name: profile.profileName,
    profile_type: profile.profileType,
    client_profile_id: profile.clientProfileId,
    profile_email: profile.profileEmail,
    profile_msisdn: profile.profileMsisdn,
    contact_person_name: profile.contactPersonName,
    contact_person_email: profile.contactPersonEmail,
    contact_person_msisdn: profile.contactPersonMsisdn,
    identification_number: profile.identificationNumber,
    physical_address: profile.physicalAddress,
    country: profile.country,
    description: profile.description,
    is_active: profile.isActive,
    status: profileStatus(profile),
    created_at: profile.createdAt.toISOString(),
    updated_at: profile.updatedAt.toISOString(),
  };
}

/** The create response shows the two msisdns as numbers, as the wallet document does. */
export function createdProfileRecord(profile: Profile, client: Pick<Client, 'code'>) {
  return {
    ...profileFields(profile, client),
    profile_msisdn: msisdnAsNumber(profile.profileMsisdn),
    contact_person_msisdn: msisdnAsNumber(profile.contactPersonMsisdn),
  };
}

function msisdnAsNumber(msisdn: string): number {
  return Number(msisdn.replace(/^\+/, ''));
}
