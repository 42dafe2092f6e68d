import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { WalletPrincipal } from '../auth/principal';
import { envelope, Page } from '../common/http/pagination';
import { AccountType } from './account-type.entity';
import { CreateAccountTypeDto } from './wallet.dto';
import { accountTypeListRecord, accountTypeRecord } from './wallet.presenter';

@Injectable()
export class AccountTypesService {
  constructor(@InjectRepository(AccountType) private readonly types: Repository<AccountType>) {}

  async create(principal: WalletPrincipal, dto: CreateAccountTypeDto) {
    const type = this.types.create({
      clientId: principal.clientId,
      name: dto.account_type_name,
      description: dto.account_type_description ?? null,
      isActive: dto.is_active ?? 1,
    });
    await this.types.insert(type);
    return accountTypeRecord(await this.types.findOneByOrFail({ id: type.id }));
  }

  async list(principal: WalletPrincipal, page: Page) {
    const [records, total] = await this.types.findAndCount({
      where: { clientId: principal.clientId },
      order: { createdAt: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    const active = await this.types.countBy({ clientId: principal.clientId, isActive: 1 });
    return envelope(
      page,
      total,
      [
        { name: 'active', count: active },
        { name: 'inactive', count: total - active },
      ],
      records.map((t) => accountTypeListRecord(t, principal.clientCode)),
    );
  }
}
