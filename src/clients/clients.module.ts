import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from './client.entity';
import { ClientsService } from './clients.service';

@Global()
@Module({ imports: [TypeOrmModule.forFeature([Client])], providers: [ClientsService], exports: [ClientsService] })
export class ClientsModule {}
