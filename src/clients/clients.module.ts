import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from './client.entity';
import { CallbackSettingsService } from './callback-settings.service';
import { ClientsService } from './clients.service';

/** Merchants (the tenants) and their callback settings: endpoints per kind and the signing secret made with the client. */
@Module({
  imports: [TypeOrmModule.forFeature([Client])],
  providers: [ClientsService, CallbackSettingsService],
  exports: [ClientsService, CallbackSettingsService],
})
export class ClientsModule {}
